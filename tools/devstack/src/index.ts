export * from './ports';
export * from './service-process';
export * from './one-shot';
export * from './stack';
export * from './databases';
export * from './test-stack';
export * from './mcp-client';
export * from './grant-key-file';
