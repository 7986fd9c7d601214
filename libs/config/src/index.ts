export * from './validate-env';
export * from './env-classes';
export * from './env.module';
export * from './secrets';
