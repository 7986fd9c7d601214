export * from './tracing';
export * from './spans';
export * from './tracing-shutdown';
