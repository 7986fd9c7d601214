/**
 * What one tools/call may cost, counted by the apps themselves (/metrics):
 * held by call-budget.e2e.spec.ts with tracing off, and by tracing.e2e.spec.ts
 * with it on (a trace adds headers, not messages).
 */
export const CALL_BUDGET = {
  /**
   * Messages the apps publish per call: the gateway's request, the inbox
   * publish, the pod's reply, the ack, the reply-stored notice, the answer,
   * and the replica's word to the pod that its reply is stored (without it a
   * reply lost with a NATS server went unseen until the ack wait, and another
   * pod ran the call again).
   */
  published: 7,
  /**
   * Messages the apps are delivered per call: the request, the inbox message,
   * the reply, the answer, the pod's word that its reply is stored.
   */
  delivered: 5,
  sqlStatements: 2,
  sqlCommits: 2,
} as const;
