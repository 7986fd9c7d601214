export * from './json-logger';
export * from './health.module';
export * from './readiness-checks';
