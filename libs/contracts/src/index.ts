import 'reflect-metadata';
export * from './bus/subjects';
export * from './bus/operations';
export * from './envelopes/content';
export * from './envelopes/chat-message';
export * from './envelopes/agent-reply';
export * from './envelopes/validate';
export * from './skills/skill-definition';
export * from './errors';
