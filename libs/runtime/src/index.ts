export * from './run-service';
export * from './service-error-http.filter';
export { installRequestIds, requestIdOf } from './request-ids';
export * from './draining';
export * from './shutdown';
export type { SlowBodies } from './body-deadlines';
export * from './text-params.pipe';
