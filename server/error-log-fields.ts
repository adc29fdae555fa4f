/** Enough of a failure to act on (the STS/S3 code, status, request id), and nothing from the config: for the log only. */
export function errorLogFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) }
  const details = error as Error & {
    Code?: string
    code?: string
    $metadata?: { httpStatusCode?: number; requestId?: string }
  }
  return {
    type: error.name,
    message: error.message,
    code: details.Code ?? details.code ?? error.name,
    status: details.$metadata?.httpStatusCode,
    requestId: details.$metadata?.requestId,
    stack: error.stack,
  }
}
