import type { DataSource } from 'typeorm';
import type { ReadinessCheck } from './health.module';

// The bus's own check is `BusClient.readiness()` (libs/bus holds the NATS connection).

export function databaseReadiness(dataSource: DataSource): ReadinessCheck {
  return {
    name: 'database',
    check: async () => {
      await dataSource.query('SELECT 1');
    },
  };
}
