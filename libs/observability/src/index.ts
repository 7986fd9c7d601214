export * from './json-logger';
export * from './logging/log-context';
export * from './logging/redaction';
export * from './health.module';
export * from './readiness';
export * from './management-server';
export * from './metrics.module';
export * from './tracing';
