/** `_meta` key naming the `subscriptions/listen` request a message belongs to. */
export const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';

/** Most resource URIs one stream may watch. */
export const MAX_RESOURCE_SUBSCRIPTIONS = 100;

/** What a `subscriptions/listen` stream carries: the part of the client's filter we honour. */
export interface SubscriptionFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
  /** Tasks (io.modelcontextprotocol/tasks) whose `notifications/tasks` the stream carries: the caller's own. */
  taskIds?: string[];
}

/**
 * The honoured filter of `params.notifications`, or why it is refused
 * (-32602). Every field is optional; only `true` subscribes to a list, and
 * resource URIs are kept as given (an update names its URI exactly).
 */
export function honouredFilter(
  notifications: unknown,
  maxUriChars: number,
): { ok: true; filter: SubscriptionFilter } | { ok: false; message: string } {
  if (typeof notifications !== 'object' || notifications === null || Array.isArray(notifications))
    return { ok: false, message: 'params.notifications must be an object (the subscription filter)' };
  const given = notifications as Record<string, unknown>;
  const filter: SubscriptionFilter = {};
  for (const list of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
    const value = given[list];
    if (value !== undefined && typeof value !== 'boolean')
      return { ok: false, message: `params.notifications.${list} must be a boolean` };
    if (value) filter[list] = true;
  }
  const uris = given.resourceSubscriptions;
  if (uris !== undefined) {
    if (
      !Array.isArray(uris) ||
      uris.length > MAX_RESOURCE_SUBSCRIPTIONS ||
      !uris.every((uri) => typeof uri === 'string' && uri.length > 0 && uri.length <= maxUriChars)
    ) {
      return {
        ok: false,
        message: `params.notifications.resourceSubscriptions must be at most ${MAX_RESOURCE_SUBSCRIPTIONS} resource URIs`,
      };
    }
    if (uris.length) filter.resourceSubscriptions = [...new Set(uris as string[])];
  }
  const taskIds = given.taskIds;
  if (taskIds !== undefined) {
    if (
      !Array.isArray(taskIds) ||
      taskIds.length > MAX_RESOURCE_SUBSCRIPTIONS ||
      !taskIds.every((task) => typeof task === 'string' && task.length > 0 && task.length <= 64)
    )
      return {
        ok: false,
        message: `params.notifications.taskIds must be at most ${MAX_RESOURCE_SUBSCRIPTIONS} task ids`,
      };
    if (taskIds.length) filter.taskIds = [...new Set(taskIds as string[])];
  }
  return { ok: true, filter };
}
