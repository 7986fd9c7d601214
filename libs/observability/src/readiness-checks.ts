import type { NatsConnection } from 'nats';
import type { DataSource } from 'typeorm';
import type { ReadinessCheck } from './health.module';

export function natsReadiness(nc: NatsConnection): ReadinessCheck {
  return {
    name: 'nats',
    check: async () => {
      if (nc.isClosed()) throw new Error('connection closed');
      await nc.flush();
    },
  };
}

export function databaseReadiness(dataSource: DataSource): ReadinessCheck {
  return {
    name: 'database',
    check: async () => {
      await dataSource.query('SELECT 1');
    },
  };
}
