export * from './json-logger';
export * from './health.module';
export * from './readiness-checks';
export * from './metrics.module';
