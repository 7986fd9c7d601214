import { Module, type DynamicModule } from '@nestjs/common';
import { READINESS_CHECKS, type ReadinessCheck } from './readiness';

export type { ReadinessCheck } from './readiness';

/**
 * The app's readiness checks, supplied through a factory. They are served on
 * the management port (see management-server.ts), never on the app's own port.
 */
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
      global: true,
      imports: options.imports,
      providers: [{ provide: READINESS_CHECKS, inject: options.inject as never[], useFactory: options.useFactory }],
      exports: [READINESS_CHECKS],
    };
  }
}
