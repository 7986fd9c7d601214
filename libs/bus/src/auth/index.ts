export * from './permissions';
export * from './authority';
export * from './revocation';
