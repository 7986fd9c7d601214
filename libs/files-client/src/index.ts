export * from './files-api';
export * from './tool-calls';
