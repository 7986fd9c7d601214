import { Inject, Module, type DynamicModule } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Kysely, sql } from 'kysely';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { MeteredPostgresDialect } from './metered-dialect';

/** The app's `Kysely<…>`, typed by the app's schema where it is injected. */
export const KYSELY = Symbol('KYSELY');
/** The `/ready` check of the app's database. */
export const DATABASE_READINESS = Symbol('DATABASE_READINESS');

/** `@InjectKysely() db: Kysely<AppTables>`. */
export const InjectKysely = (): ParameterDecorator => Inject(KYSELY);

/**
 * A query builder over the pool TypeORM already opened (one pool per app, one
 * `max`, one search_path), metered like TypeORM's own queries. The pool is read
 * at the first query, once the DataSource is initialised.
 */
export function kyselyOver<DB>(dataSource: DataSource): Kysely<DB> {
  return new Kysely<DB>({
    dialect: new MeteredPostgresDialect({ pool: async () => (dataSource.driver as PostgresDriver).master }),
  });
}

/** A readiness check: the database answers a statement. */
export function databaseReadiness(db: Kysely<unknown>): { name: string; check(): Promise<void> } {
  return {
    name: 'database',
    check: async () => {
      await sql`SELECT 1`.execute(db);
    },
  };
}

/**
 * Provides `KYSELY` and `DATABASE_READINESS` to the whole app, next to its
 * `TypeOrmModule.forRoot…` (which keeps running migrations and closes the pool).
 */
@Module({})
export class KyselyModule {
  static forRoot(): DynamicModule {
    return {
      module: KyselyModule,
      global: true,
      providers: [
        {
          provide: KYSELY,
          inject: [getDataSourceToken()],
          useFactory: (dataSource: DataSource) => kyselyOver(dataSource),
        },
        { provide: DATABASE_READINESS, inject: [KYSELY], useFactory: databaseReadiness },
      ],
      exports: [KYSELY, DATABASE_READINESS],
    };
  }
}
