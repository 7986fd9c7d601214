export * from './run-service';
export * from './service-error-http.filter';
