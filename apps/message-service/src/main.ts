import { exitOnStartupFailure, runService } from '@mcpgw/runtime';
import { AppModule } from './app.module';
import { loadEnv, type MessageServiceEnv } from './config/message-service.env';

runService({
  service: 'message-service',
  module: AppModule,
  loadEnv,
  port: (env: MessageServiceEnv) => env.MESSAGE_SERVICE_PORT,
  host: (env: MessageServiceEnv) => env.MESSAGE_SERVICE_HOST,
  busQueue: 'message-service',
}).catch(exitOnStartupFailure('message-service'));
