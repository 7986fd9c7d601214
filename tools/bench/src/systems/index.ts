import type { BenchConfig, SystemId } from '../config';
import { startBareSdk } from './bare-sdk';
import { startBridgedStack } from './bridged-stack';
import { startPeerGateway } from './peer-gateways';
import {
  externalStack,
  startClusterStack,
  startScaledStack,
  startSurfaceStack,
  startStack,
  startWebhookStack,
} from './stack';
import type { RunningSystem } from './system';

export type { RunningSystem, WebhookProbe } from './system';
export { TOOL } from './system';

/** Starts one system under test, each in processes of its own. */
export function startSystem(id: SystemId, config: BenchConfig): Promise<RunningSystem> {
  switch (id) {
    case 'stack':
      return config.external ? Promise.resolve(externalStack(config.external.url, config.external.key)) : startStack();
    case 'stack-audit-off':
      return startStack({ AUDIT: 'off' });
    case 'stack-rest':
      return startSurfaceStack('rest');
    case 'stack-a2a':
      return startSurfaceStack('a2a');
    case 'stack-webhook-live':
      return startWebhookStack('live');
    case 'stack-webhook-dead':
      return startWebhookStack('dead');
    case 'stack-2x2':
      return startScaledStack();
    case 'stack-r3':
      return startClusterStack();
    case 'stack-bridge':
      return startBridgedStack();
    case 'sdk-stateless':
      return startBareSdk('stateless');
    case 'sdk-stateful':
      return startBareSdk('stateful');
    case 'mcp-proxy':
    case 'supergateway':
      return startPeerGateway(id);
  }
}
