import { NetworkError, UploadAbortedError } from '../../engine/core/errors.ts'
import type { HttpRequest, HttpResponse, Transport } from '../../engine/transport/transport.ts'

/** A request the engine made, held until the test answers it. */
export interface PendingRequest extends HttpRequest {
  /** `PUT ?partNumber=2`, `POST ?uploads`, … : method and S3 query, for asserting protocol order. */
  step: string
  respond(status: number, headers?: Record<string, string>, body?: string): void
  fail(error: Error): void
}

/**
 * A step-through transport for unit tests of protocol order: every request waits until the test
 * answers it, so a test can see what is in flight at each moment. Storage itself is never faked:
 * flows end to end are tested against real S3 servers.
 */
export function stepThroughTransport() {
  const pending: PendingRequest[] = []
  const log: string[] = []
  const waiters: Array<() => void> = []

  const transport: Transport = (request) =>
    new Promise<HttpResponse>((resolve, reject) => {
      const step = `${request.method} ${describeQuery(request.url)}`.trim()
      log.push(step)
      const entry: PendingRequest = {
        ...request,
        step,
        respond(status, headers = {}, body = '') {
          remove()
          const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
          resolve({ status, header: (name) => lower[name.toLowerCase()] ?? null, body })
        },
        fail(error) {
          remove()
          reject(error)
        },
      }
      const remove = () => {
        const index = pending.indexOf(entry)
        if (index >= 0) pending.splice(index, 1)
      }
      // As the real transports do: an aborted request rejects at once.
      request.signal?.addEventListener('abort', () => entry.fail(new UploadAbortedError()))
      pending.push(entry)
      for (const wake of waiters.splice(0)) wake()
    })

  /** Resolves once at least `count` requests are waiting for an answer. */
  async function waitForPending(count = 1): Promise<PendingRequest[]> {
    while (pending.length < count) await new Promise<void>((wake) => waiters.push(wake))
    return [...pending]
  }

  return { transport, pending, log, waitForPending }
}

const describeQuery = (url: string) => {
  // The upload API (tests use https://app.test/api/s3-upload): named by its route.
  const { pathname } = new URL(url)
  if (pathname.startsWith('/api/s3-upload')) return pathname.slice('/api/s3-upload'.length) || '/'
  const query = new URL(url).searchParams
  if (query.has('uploads')) return '?uploads'
  if (query.has('session')) return '?session'
  if (query.has('partNumber')) return `?partNumber=${query.get('partNumber')}`
  if (query.has('uploadId')) return '?uploadId'
  return ''
}

export const xml = {
  created: (uploadId = 'upload-1') =>
    `<?xml version="1.0"?><InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`,
  completed: (etag = '"final-3"') =>
    `<?xml version="1.0"?><CompleteMultipartUploadResult><ETag>${etag.replace(/"/g, '&quot;')}</ETag></CompleteMultipartUploadResult>`,
  error: (code: string, message = 'failed', requestId = 'REQ123') =>
    `<?xml version="1.0"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>${requestId}</RequestId></Error>`,
}

/** A reply that never came: the connection dropped after the request (the fault proxy's lose-reply). */
export const lostReply = () => new NetworkError('Network error: connection reset')

/** Lets pending callbacks and timers run. */
export const settle = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms))
