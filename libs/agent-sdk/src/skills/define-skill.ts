import type { SideEffectClass, SkillDefinition, SkillExecution } from '@mcpgw/contracts';
import type { Skill, SkillContext, SkillResult } from './skill';

/** A skill as one writes it: camelCase; it is registered in the wire's shape (`SkillDefinition`). */
export interface SkillSpec<A> {
  name: string;
  title?: string;
  description: string;
  /** JSON Schema of the arguments: the gateway validates every call against it before the skill sees it. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of `structured` in the output (MCP `outputSchema`). */
  outputSchema?: Record<string, unknown>;
  /** `read` (the default), `write` or `destructive`: what a call may change, for grants and clients. */
  sideEffectClass?: SideEffectClass;
  /** MCP tool annotations (`readOnlyHint`, `idempotentHint`, …). */
  annotations?: Record<string, unknown>;
  kind?: string;
  /** Credentials a grant must carry to call it. */
  requiredCredentials?: string[];
  /** Client capabilities a call needs (e.g. `{ elicitation: {} }` for a skill that asks). */
  requiredClientCapabilities?: Record<string, unknown>;
  /** Task support (MCP tasks): `{ taskSupport: 'optional' | 'required' | 'forbidden' }`. */
  execution?: SkillExecution;
  _meta?: Record<string, unknown>;
  run(args: A, ctx: SkillContext): Promise<SkillResult>;
}

/** A skill from its spec: the definition the agent registers, and its `run`. */
export function defineSkill<A = Record<string, unknown>>(spec: SkillSpec<A>): Skill<A> {
  const definition: SkillDefinition = {
    name: spec.name,
    description: spec.description,
    input_schema: spec.inputSchema,
    side_effect_class: spec.sideEffectClass ?? 'read',
    ...(spec.title !== undefined && { title: spec.title }),
    ...(spec.outputSchema !== undefined && { output_schema: spec.outputSchema }),
    ...(spec.annotations !== undefined && { annotations: spec.annotations }),
    ...(spec.kind !== undefined && { kind: spec.kind }),
    ...(spec.requiredCredentials !== undefined && { required_credentials: spec.requiredCredentials }),
    ...(spec.requiredClientCapabilities !== undefined && {
      required_client_capabilities: spec.requiredClientCapabilities,
    }),
    ...(spec.execution !== undefined && { execution: spec.execution }),
    ...(spec._meta !== undefined && { _meta: spec._meta }),
  };
  return { definition, run: (args, ctx) => spec.run(args, ctx) };
}
