import { Module, type DynamicModule } from '@nestjs/common';

/**
 * An app's validated environment as a global provider: `EnvModule.forRoot(TOKEN, loadEnv)`,
 * then `@Inject(TOKEN) env: AppEnv` anywhere in the app.
 */
@Module({})
export class EnvModule {
  static forRoot(token: symbol, load: () => object): DynamicModule {
    return {
      module: EnvModule,
      global: true,
      providers: [{ provide: token, useFactory: load }],
      exports: [token],
    };
  }
}
