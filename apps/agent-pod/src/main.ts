import { exitOnStartupFailure, runService } from '@mcpgw/runtime';
import { AppModule } from './app.module';
import { loadEnv, type AgentPodEnv } from './config/agent-pod.env';

runService({
  service: 'agent-pod',
  module: AppModule,
  loadEnv,
  port: (env: AgentPodEnv) => env.AGENT_POD_PORT,
  host: (env: AgentPodEnv) => env.AGENT_POD_HOST,
}).catch(exitOnStartupFailure('agent-pod'));
