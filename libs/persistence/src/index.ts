export * from './postgres-options';
export * from './run-migrations';
export * from './pg-notifications';
export * from './sql-meter';
export * from './group-commit';
export * from './metered-dialect';
export * from './kysely.module';
export * from './column-types';
