export * from './permissions';
export * from './authority';
export * from './revocation';
export * from './reply-inboxes';
