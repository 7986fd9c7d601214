export * from './files-api';
