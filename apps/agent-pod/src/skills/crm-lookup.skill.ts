import type { Skill } from './skill';

const CUSTOMERS: Record<string, { name: string; tier: string; open_orders: number }> = {
  'C-1001': { name: 'Acme Corp', tier: 'gold', open_orders: 3 },
  'C-1002': { name: 'Globex', tier: 'silver', open_orders: 0 },
};

/**
 * Looks a customer up in the (fake) CRM. Needs the `crm` credential: a task
 * whose grant does not hold it cannot call this skill. Returns structured output.
 */
export const crmLookupSkill: Skill = {
  definition: {
    name: 'crm_lookup',
    title: 'CRM lookup',
    kind: 'function',
    description: 'Looks a customer up in the CRM by id.',
    input_schema: {
      type: 'object',
      properties: { customer_id: { type: 'string', pattern: '^C-[0-9]{4}$' } },
      required: ['customer_id'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: {
        found: { type: 'boolean' },
        customer: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            tier: { type: 'string' },
            open_orders: { type: 'integer' },
          },
        },
      },
      required: ['found'],
    },
    side_effect_class: 'read',
    required_credentials: ['crm'],
    annotations: { readOnlyHint: true, openWorldHint: false },
    _meta: { 'mcpgw/source': 'mock-crm' },
  },
  async run(args, ctx) {
    const granted = (ctx.message.meta?.credentials as string[] | undefined) ?? [];
    if (!granted.includes('crm')) {
      return {
        content: [{ type: 'text', text: 'crm_lookup: no crm credential was granted to this call' }],
        isError: true,
      };
    }
    const id = String(args.customer_id);
    const customer = CUSTOMERS[id];
    const output = customer ? { found: true, customer: { id, ...customer } } : { found: false };
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structured: output };
  },
};
