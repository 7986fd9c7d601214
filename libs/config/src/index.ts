export * from './validate-env';
export * from './env-classes';
