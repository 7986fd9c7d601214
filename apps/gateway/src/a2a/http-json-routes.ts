/**
 * The HTTP+JSON binding's operations (A2A 1.0 §11), by method and the path
 * under the interface URL (`…/rest`): one table, one match. Custom methods are
 * written `:verb` after the resource (`/message:send`, `/tasks/{id}:cancel`).
 */
export type HttpJsonOperation =
  | { op: 'SendMessage' }
  | { op: 'SendStreamingMessage' }
  | { op: 'GetTask'; taskId: string }
  | { op: 'ListTasks' }
  | { op: 'CancelTask'; taskId: string }
  | { op: 'SubscribeToTask'; taskId: string }
  | { op: 'CreateTaskPushNotificationConfig'; taskId: string }
  | { op: 'ListTaskPushNotificationConfigs'; taskId: string }
  | { op: 'GetTaskPushNotificationConfig'; taskId: string; configId: string }
  | { op: 'DeleteTaskPushNotificationConfig'; taskId: string; configId: string }
  | { op: 'GetExtendedAgentCard' };

const SEGMENT = '([^/:]+)';

const ROUTES: [string, RegExp, (m: RegExpExecArray) => HttpJsonOperation][] = [
  ['POST', /^\/message:send$/, () => ({ op: 'SendMessage' })],
  ['POST', /^\/message:stream$/, () => ({ op: 'SendStreamingMessage' })],
  ['GET', new RegExp(`^/tasks/${SEGMENT}$`), (m) => ({ op: 'GetTask', taskId: decode(m[1]) })],
  ['GET', /^\/tasks$/, () => ({ op: 'ListTasks' })],
  ['POST', new RegExp(`^/tasks/${SEGMENT}:cancel$`), (m) => ({ op: 'CancelTask', taskId: decode(m[1]) })],
  ['POST', new RegExp(`^/tasks/${SEGMENT}:subscribe$`), (m) => ({ op: 'SubscribeToTask', taskId: decode(m[1]) })],
  ['GET', new RegExp(`^/tasks/${SEGMENT}:subscribe$`), (m) => ({ op: 'SubscribeToTask', taskId: decode(m[1]) })],
  [
    'POST',
    new RegExp(`^/tasks/${SEGMENT}/pushNotificationConfigs$`),
    (m) => ({ op: 'CreateTaskPushNotificationConfig', taskId: decode(m[1]) }),
  ],
  [
    'GET',
    new RegExp(`^/tasks/${SEGMENT}/pushNotificationConfigs$`),
    (m) => ({ op: 'ListTaskPushNotificationConfigs', taskId: decode(m[1]) }),
  ],
  [
    'GET',
    new RegExp(`^/tasks/${SEGMENT}/pushNotificationConfigs/${SEGMENT}$`),
    (m) => ({ op: 'GetTaskPushNotificationConfig', taskId: decode(m[1]), configId: decode(m[2]) }),
  ],
  [
    'DELETE',
    new RegExp(`^/tasks/${SEGMENT}/pushNotificationConfigs/${SEGMENT}$`),
    (m) => ({ op: 'DeleteTaskPushNotificationConfig', taskId: decode(m[1]), configId: decode(m[2]) }),
  ],
  ['GET', /^\/extendedAgentCard$/, () => ({ op: 'GetExtendedAgentCard' })],
];

/** The operation a request names, or undefined (404). `path` is without the query string. */
export function httpJsonOperation(method: string, path: string): HttpJsonOperation | undefined {
  for (const [verb, pattern, operation] of ROUTES) {
    if (verb !== method) continue;
    const match = pattern.exec(path);
    if (match) return operation(match);
  }
  return undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
