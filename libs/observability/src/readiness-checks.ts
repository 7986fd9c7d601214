import type { NatsConnection } from 'nats';
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
