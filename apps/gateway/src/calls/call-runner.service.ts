import { Injectable } from '@nestjs/common';
import { IdempotentCalls } from '../idempotency/idempotent-calls.service';
import { CallMetrics } from '../metrics/call-metrics';
import { CallError } from './call-errors';
import { CallPipeline, type CallOutcome, type CallRequest, type ExecuteOptions } from './call-pipeline.service';

/** A call's result as the surface rendered it (JSON text, serialized once), or its typed error. */
export type CallRun = { ok: true; resultText: string; replayed: boolean } | { ok: false; error: CallError };

/**
 * What both surfaces do around one tools/call: run it through the pipeline, or
 * through its idempotency record when the caller gave a key; count and time it;
 * render the outcome once, in the surface's shape. Errors of the call come back
 * as values, for the surface to map to its own codes; anything else throws.
 */
@Injectable()
export class CallRunner {
  constructor(
    private readonly pipeline: CallPipeline,
    private readonly idempotent: IdempotentCalls,
    private readonly metrics: CallMetrics,
  ) {}

  async run(
    surface: 'agent' | 'grant',
    call: CallRequest,
    idempotencyKey: string | undefined,
    render: (outcome: CallOutcome) => object,
    options: ExecuteOptions = {},
  ): Promise<CallRun> {
    let outcome = 'internal';
    const renderText = (answer: CallOutcome) => {
      outcome = answer.isError ? 'tool_error' : 'ok';
      return JSON.stringify(render(answer));
    };
    const done = this.metrics.start(surface, call);
    try {
      if (!idempotencyKey) {
        return { ok: true, resultText: renderText(await this.pipeline.call(call, options)), replayed: false };
      }
      const ran = await this.idempotent.run(call, idempotencyKey, renderText, options);
      if (ran.replayed) outcome = 'replayed';
      return { ok: true, ...ran };
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      outcome = error.kind;
      return { ok: false, error };
    } finally {
      done(outcome);
    }
  }
}
