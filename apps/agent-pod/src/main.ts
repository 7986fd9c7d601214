import { exitOnStartupFailure, runService } from '@mcpgw/runtime';
import { AppModule } from './app.module';
import { loadEnv } from './config/agent-pod.env';

runService({
  service: 'agent-pod',
  module: AppModule,
  loadEnv,
}).catch(exitOnStartupFailure('agent-pod'));
