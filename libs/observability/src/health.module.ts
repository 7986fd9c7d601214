import { Controller, Get, HttpCode, Inject, Module, ServiceUnavailableException, type DynamicModule } from '@nestjs/common';

/** A dependency a service needs to do its work (database, NATS, …). */
export interface ReadinessCheck {
  name: string;
  /** Resolves when healthy; rejects with the reason otherwise. */
  check(): Promise<void>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

const CHECK_TIMEOUT_MS = 2_000;

@Controller()
class HealthController {
  constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

  /** Liveness: the process answers. Never touches a dependency. */
  @Get('health')
  @HttpCode(200)
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: every dependency answers, within a deadline. */
  @Get('ready')
  async ready(): Promise<{ status: 'ready'; checks: Record<string, string> }> {
    const results = await Promise.all(
      this.checks.map(async ({ name, check }) => {
        try {
          await withDeadline(check(), CHECK_TIMEOUT_MS);
          return [name, 'ok'] as const;
        } catch (error) {
          return [name, (error as Error).message || 'failed'] as const;
        }
      }),
    );
    const checks = Object.fromEntries(results);
    if (results.some(([, state]) => state !== 'ok')) {
      throw new ServiceUnavailableException({ status: 'not_ready', checks });
    }
    return { status: 'ready', checks };
  }
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
    );
  });
}

/** `/health` and `/ready`. The app supplies its readiness checks through a factory. */
@Module({})
export class HealthModule {
  static forChecks(options: {
    imports?: DynamicModule['imports'];
    inject: unknown[];
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Nest's factory providers receive whatever `inject` lists
    useFactory: (...deps: any[]) => ReadinessCheck[];
  }): DynamicModule {
    return {
      module: HealthModule,
      imports: options.imports,
      controllers: [HealthController],
      providers: [{ provide: READINESS_CHECKS, inject: options.inject as never[], useFactory: options.useFactory }],
    };
  }
}
