import type { ResourceProvider } from '@mcpgw/agent-sdk';

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** The resource fixtures of the MCP conformance suite, served by the agent. */
export const conformanceResources: ResourceProvider = {
  resources: [
    { uri: 'test://static-text', name: 'Static text', description: 'A static text resource', mimeType: 'text/plain' },
    { uri: 'test://static-binary', name: 'Static binary', description: 'A static PNG', mimeType: 'image/png' },
    {
      uri: 'test://watched-resource',
      name: 'Watched resource',
      description: 'A resource to subscribe to',
      mimeType: 'text/plain',
    },
  ],
  templates: [
    {
      uriTemplate: 'test://template/{id}/data',
      name: 'Data by id',
      description: 'Data for an id',
      mimeType: 'application/json',
    },
  ],
  async read(uri) {
    if (uri === 'test://static-text') {
      return [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }];
    }
    if (uri === 'test://static-binary') return [{ uri, mimeType: 'image/png', blob: PNG_1X1 }];
    if (uri === 'test://watched-resource') return [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }];
    const id = /^test:\/\/template\/([^/]+)\/data$/.exec(uri)?.[1];
    if (id) {
      return [
        {
          uri,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ];
    }
    return undefined;
  },
};
