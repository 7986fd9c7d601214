export * from './secret-tokens';
export * from './api-keys';
export * from './personal-access-tokens';
export * from './runtime-grants';
export * from './admin-tokens';
