import { useEffect, useState } from 'react'
import { DEFAULT_API_PATH, type InfoReply } from '../protocol/wire.ts'

/** What {@link useApiInfo} knows so far: asking, the upload API's answer, or why there is none. */
export type ApiInfoState =
  | { state: 'loading' }
  | { state: 'ready'; info: InfoReply }
  /** No /info route (e.g. a next-s3-upload API route) or it failed: the API alone decides. */
  | { state: 'unknown'; reason: string }

/**
 * What `GET {api}/info` says your upload API can issue and accept (`InfoReply` in
 * `updraft-s3/protocol`): token mode or not, and the limits a page checks files against before
 * asking. Asked once per API (`false`: not at all); fields of the wrong type are dropped rather
 * than trusted.
 *
 * Never throws: an API without `/info` (a next-s3-upload route) or a failed request gives
 * `{ state: 'unknown', reason }`, and the API alone then decides.
 * @param api - Your upload API's URL (`/info` is appended), '/api/s3-upload' when left out; `false` asks nothing.
 * @example
 * ```tsx
 * const info = useApiInfo('/api/s3-upload')
 * if (info.state === 'ready' && !info.info.token) console.log('token mode is off:', info.info.tokenUnavailableReason)
 * ```
 */
export function useApiInfo(api: string | false = DEFAULT_API_PATH): ApiInfoState {
  const [state, setState] = useState<ApiInfoState>(api === false ? NOT_ASKED : { state: 'loading' })

  useEffect(() => {
    if (api === false) return setState(NOT_ASKED)
    const controller = new AbortController()
    fetchInfo(api, controller.signal).then(setState, (error: unknown) => {
      if (!controller.signal.aborted) setState({ state: 'unknown', reason: String((error as Error).message ?? error) })
    })
    return () => controller.abort()
  }, [api])

  return state
}

const NOT_ASKED: ApiInfoState = { state: 'unknown', reason: 'not asked' }

async function fetchInfo(api: string, signal: AbortSignal): Promise<ApiInfoState> {
  const response = await fetch(`${api.replace(/\/$/, '')}/info`, { signal, headers: { accept: 'application/json' } })
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
      ...(Array.isArray(allowedTypes) && allowedTypes.every((type) => typeof type === 'string')
        ? { allowedTypes }
        : {}),
    },
  }
}
