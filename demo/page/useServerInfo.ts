import { useEffect, useState } from 'react'
import type { InfoReply } from '../../protocol/wire.ts'

/** What `GET {endpoint}/info` answers (protocol/wire.ts). */
export type ServerInfo = InfoReply

export type ServerInfoState =
  | { state: 'loading' }
  | { state: 'ready'; info: ServerInfo }
  /** No /info route (e.g. a next-s3-upload API route) or it failed: both modes stay offered. */
  | { state: 'unknown'; reason: string }

export function useServerInfo(endpoint: string): ServerInfoState {
  const [state, setState] = useState<ServerInfoState>({ state: 'loading' })

  useEffect(() => {
    const controller = new AbortController()
    fetchInfo(endpoint, controller.signal).then(setState, (error: unknown) => {
      if (!controller.signal.aborted) setState({ state: 'unknown', reason: String((error as Error).message ?? error) })
    })
    return () => controller.abort()
  }, [endpoint])

  return state
}

async function fetchInfo(endpoint: string, signal: AbortSignal): Promise<ServerInfoState> {
  const response = await fetch(`${endpoint.replace(/\/$/, '')}/info`, { signal, headers: { accept: 'application/json' } })
  if (!response.ok) return { state: 'unknown', reason: `the server answered HTTP ${response.status} to /info` }
  const info = (await response.json()) as Partial<ServerInfo>
  if (typeof info.token !== 'boolean') return { state: 'unknown', reason: 'the server sent no capabilities' }
  return {
    state: 'ready',
    info: {
      token: info.token,
      tokenUnavailableReason: info.tokenUnavailableReason,
      presigned: true,
      store: typeof info.store === 'string' ? info.store : 'unknown store',
    },
  }
}
