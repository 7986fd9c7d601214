import { text, type Skill } from './skill';

/** Deterministic fake search results: the same query always gives the same list. */
export const webSearchSkill: Skill = {
  definition: {
    name: 'web_search',
    title: 'Web search',
    kind: 'function',
    description: 'Searches the web and returns the top results.',
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'What to search for' },
        max_results: { type: 'integer', minimum: 1, maximum: 20, default: 5 },
      },
      required: ['query'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: {
        results: {
          type: 'array',
          items: {
            type: 'object',
            properties: { title: { type: 'string' }, url: { type: 'string' }, snippet: { type: 'string' } },
            required: ['title', 'url', 'snippet'],
          },
        },
      },
      required: ['results'],
    },
    side_effect_class: 'read',
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  async run(args) {
    const query = String(args.query);
    const count = Number(args.max_results ?? 5);
    const results = Array.from({ length: count }, (_, i) => ({
      title: `Result ${i + 1} for ${query}`,
      url: `https://search.example/${encodeURIComponent(query)}/${i + 1}`,
      snippet: `Snippet ${i + 1} about ${query}.`,
    }));
    const links = results.map((r) => ({
      type: 'resource_link' as const,
      uri: r.url,
      name: r.title,
      mimeType: 'text/html',
    }));
    return { content: [text(JSON.stringify({ results })), ...links], structured: { results } };
  },
};
