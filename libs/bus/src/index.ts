export * from './bus-options';
export * from './bus-client';
export * from './bus-server';
export * from './bus.module';
export * from './json';
export * from './jetstream/agent-inbox';
export * from './bus-exception.filter';
export * from './bus-meter';
