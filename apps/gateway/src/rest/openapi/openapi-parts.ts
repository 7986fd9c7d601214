/** The building blocks of the public OpenAPI document: references, answers, path parameters, security. */

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: object) => ({ 'application/json': { schema } });
export const answer = (description: string, schema: object, headers?: object) => ({
  description,
  ...(headers && { headers }),
  content: json(schema),
});
export const problems = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [String(status), { $ref: `#/components/responses/Problem${status}` }]));
export const refusals = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [String(status), { $ref: `#/components/responses/Refusal${status}` }]));

export const param = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string', minLength: 1 },
});
export const AGENT = param('agent_id', 'The agent, as registered');
export const WORKSPACE = param('workspace_id', 'The workspace the RuntimeGrant was minted for');
export const CALL = param('call_id', 'The call id of a call made with `Prefer: respond-async`');
export const WEBHOOK = param('webhook_id', 'A webhook of this caller (`wh_…`)');
export const DELIVERY = param('delivery_id', 'A delivery of one of this caller’s webhooks');

/** Who may call a route: an agent API key or OAuth token (surface A), a RuntimeGrant (surface B), or any of them. */
export const BY_AGENT = [{ agentApiKey: [] }, { oauth: [] }];
export const BY_GRANT = [{ runtimeGrant: [] }];
export const BY_ANY = [...BY_AGENT, ...BY_GRANT];

export const nullable = (schema: object) => ({ oneOf: [schema, { type: 'null' }] });
export const TIMESTAMP = { type: 'string', format: 'date-time' };
