import { useEffect, useState } from 'react'
import { DEFAULT_ENDPOINT, type InfoReply } from '../protocol/wire.ts'

/** What {@link useEndpointInfo} knows so far: asking, the endpoint's answer, or why there is none. */
export type EndpointInfoState =
  | { state: 'loading' }
  | { state: 'ready'; info: InfoReply }
  /** No /info route (e.g. a next-s3-upload API route) or it failed: the endpoint alone decides. */
  | { state: 'unknown'; reason: string }

/**
 * What `GET {endpoint}/info` says the endpoint can issue and accept (protocol/wire.ts `InfoReply`):
 * token mode or not, and the limits a page checks files against before asking. Asked once per
 * endpoint (`false`: not at all); fields of the wrong type are dropped rather than trusted.
 *
 * Never throws: an endpoint without `/info` (a next-s3-upload route) or a failed request gives
 * `{ state: 'unknown', reason }`, and the endpoint alone then decides.
 * @param endpoint - The endpoint's URL (`/info` is appended), '/api/s3-upload' when left out; `false` asks nothing.
 * @example
 * ```tsx
 * const info = useEndpointInfo('/api/s3-upload')
 * if (info.state === 'ready' && !info.info.token) console.log('token mode is off:', info.info.tokenUnavailableReason)
 * ```
 */
export function useEndpointInfo(endpoint: string | false = DEFAULT_ENDPOINT): EndpointInfoState {
  const [state, setState] = useState<EndpointInfoState>(endpoint === false ? NOT_ASKED : { state: 'loading' })

  useEffect(() => {
    if (endpoint === false) return setState(NOT_ASKED)
    const controller = new AbortController()
    fetchInfo(endpoint, controller.signal).then(setState, (error: unknown) => {
      if (!controller.signal.aborted) setState({ state: 'unknown', reason: String((error as Error).message ?? error) })
    })
    return () => controller.abort()
  }, [endpoint])

  return state
}

const NOT_ASKED: EndpointInfoState = { state: 'unknown', reason: 'not asked' }

async function fetchInfo(endpoint: string, signal: AbortSignal): Promise<EndpointInfoState> {
  const response = await fetch(`${endpoint.replace(/\/$/, '')}/info`, { signal, headers: { accept: 'application/json' } })
  if (!response.ok) return { state: 'unknown', reason: `the server answered HTTP ${response.status} to /info` }
  const info = (await response.json()) as Partial<InfoReply>
  if (typeof info.token !== 'boolean') return { state: 'unknown', reason: 'the server sent no capabilities' }
  const { maxFileSize, allowedTypes } = info
  return {
    state: 'ready',
    info: {
      token: info.token,
      tokenUnavailableReason: info.tokenUnavailableReason,
      presigned: true,
      store: typeof info.store === 'string' ? info.store : 'unknown store',
      ...(Number.isSafeInteger(maxFileSize) && maxFileSize! >= 0 ? { maxFileSize } : {}),
      ...(Array.isArray(allowedTypes) && allowedTypes.every((type) => typeof type === 'string') ? { allowedTypes } : {}),
    },
  }
}
