import { describe, expect, it } from 'vitest';
import { compileSchema } from '../envelopes/schemas';
import { parseAs } from '../envelopes/validate';
import { RegisterAgentRequest } from '../skills/skill-definition';
import { contractSchemas } from './contract-schemas';

const skill = { name: 'echo', description: 'Echoes', input_schema: { type: 'object' } };
const registration = { workspace_id: 'w', agent_id: 'a', pod_id: 'p', skills: [skill] };

/** The registration schema is read from the decorators: it must accept and refuse what they do. */
describe('contractSchemas: RegisterAgentRequest', () => {
  const validate = compileSchema(contractSchemas().RegisterAgentRequest);
  const samples: [string, unknown][] = [
    ['minimal', registration],
    ['optional nulls', { ...registration, resources: null, skills: [{ ...skill, title: null, execution: null }] }],
    [
      'everything',
      {
        ...registration,
        skills: [
          {
            ...skill,
            side_effect_class: 'write',
            required_credentials: ['gh'],
            execution: { taskSupport: 'optional' },
          },
        ],
        resources: [{ uri: 'x://y', name: 'y' }],
        resource_templates: [{ uriTemplate: 'x://{id}', name: 't' }],
        prompts: [{ name: 'p', arguments: [{ name: 'a', required: true }] }],
      },
    ],
    ['bad agent id', { ...registration, agent_id: '-x' }],
    ['no skills', { workspace_id: 'w', agent_id: 'a', pod_id: 'p' }],
    ['bad tool name', { ...registration, skills: [{ ...skill, name: 'a b' }] }],
    ['bad side effect', { ...registration, skills: [{ ...skill, side_effect_class: 'maybe' }] }],
    ['bad credential', { ...registration, skills: [{ ...skill, required_credentials: ['a b'] }] }],
    ['bad task support', { ...registration, skills: [{ ...skill, execution: { taskSupport: 'always' } }] }],
    ['bad prompt argument', { ...registration, prompts: [{ name: 'p', arguments: [{ name: 'a', required: 'yes' }] }] }],
    ['long pod id', { ...registration, pod_id: 'p'.repeat(201) }],
    ['pod id outside the alphabet', { ...registration, pod_id: 'p q' }],
  ];
  it.each(samples)('%s: the schema and the decorators agree', (_name, sample) => {
    expect(validate(sample)).toBe(parseAs(RegisterAgentRequest, sample).ok);
  });
});

/**
 * The checks compile their schemas at first use (`lazyValidator`), not at start: this is what
 * stops a schema ajv refuses before it ships, where a bus subscription's callback would meet it.
 */
describe('contractSchemas: every schema compiles', () => {
  it.each(Object.entries(contractSchemas()))('%s', (_name, schema) => {
    expect(() => compileSchema(schema)).not.toThrow();
  });

  it('a schema ajv refuses is caught here', () => {
    expect(() => compileSchema({ type: 'object', properties: { a: { type: 'strnig' } } })).toThrow();
  });
});
