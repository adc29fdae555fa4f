import { readFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { fileURLToPath } from 'node:url'

/** The parts of a V8 `.cpuprofile` (what `node --cpu-prof` and the inspector's Profiler.stop give) read here. */
interface CpuProfile {
  nodes: Array<{
    id: number
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
    children?: number[]
  }>
  samples: number[]
  timeDeltas: number[]
}

/** Seconds of the main thread per group, biggest first. */
export type Breakdown = Array<[group: string, seconds: number]>

/**
 * Where the main thread's time went, two ways: `phase`, by the innermost frame of this repository's
 * code on the stack (the engine's module that asked for the work, whatever Node did for it), and
 * `leaf`, by what ran (Node's socket and HTTP code, Blob reads, TLS, GC, native work between JS
 * calls). Frames of a bench client bundle are mapped back to their source through the bundle's
 * `.map` (bench/lib/child.ts writes one).
 */
export function breakdown(profileFile: string): { phase: Breakdown; leaf: Breakdown; busy: number; idle: number } {
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile
  const maps = new Map<string, SourceMap | undefined>()
  const sourceOf = (url: string, line: number, column: number) => {
    if (!url.startsWith('file:')) return url
    if (!maps.has(url)) {
      try {
        maps.set(url, new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8'))))
      } catch {
        maps.set(url, undefined)
      }
    }
    const entry = maps.get(url)?.findEntry(line, column) as { originalSource?: string } | undefined
    return entry?.originalSource ?? url
  }
  const parent = new Map<number, number>()
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const ownCode = new Map<number, string | undefined>()
  const own = (id: number): string | undefined => {
    if (ownCode.has(id)) return ownCode.get(id)
    const { url, lineNumber, columnNumber } = byId.get(id)!.callFrame
    const group = repositoryGroup(sourceOf(url, lineNumber, columnNumber))
    ownCode.set(id, group)
    return group
  }
  const phaseOf = (id: number) => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const group = own(at)
      if (group) return group
    }
    return undefined
  }
  const phase = new Map<string, number>()
  const leaf = new Map<string, number>()
  let idle = 0
  let busy = 0
  profile.samples.forEach((id, i) => {
    const seconds = (profile.timeDeltas[i + 1] ?? 0) / 1e6
    const { functionName, url, lineNumber, columnNumber } = byId.get(id)!.callFrame
    if (functionName === '(idle)') {
      idle += seconds
      return
    }
    busy += seconds
    const what = own(id) ?? nodeGroup(functionName, sourceOf(url, lineNumber, columnNumber))
    leaf.set(what, (leaf.get(what) ?? 0) + seconds)
    const who = phaseOf(id) ?? `no engine frame: ${what}`
    phase.set(who, (phase.get(who) ?? 0) + seconds)
  })
  const sorted = (groups: Map<string, number>): Breakdown => [...groups].sort((a, b) => b[1] - a[1])
  return { phase: sorted(phase), leaf: sorted(leaf), busy, idle }
}

/** This repository's (and aws4fetch's) code, by module; undefined for Node's own and other packages. */
function repositoryGroup(source: string): string | undefined {
  const inRepo = /(?:^|\/)(engine|protocol|server|bench)\/(.+?)\.ts$/.exec(source)
  if (inRepo) return `${inRepo[1]}/${inRepo[2]}.ts`
  if (source.includes('node_modules/aws4fetch')) return 'aws4fetch (SigV4)'
  if (source.includes('node_modules/@aws-sdk') || source.includes('node_modules/@smithy')) return '@aws-sdk, @smithy'
  return undefined
}

/** Node's own code and the engine's internals, by what it does. */
function nodeGroup(functionName: string, source: string): string {
  if (functionName === '(garbage collector)') return 'GC'
  if (functionName === '(program)') return 'native, between JS calls (libuv writes, TLS, parser)'
  if (/node:(_tls|tls|internal\/tls)/.test(source)) return 'node: TLS'
  if (/node:(net|_http|http|https|internal\/(streams|stream_base|http)|stream)/.test(source))
    return 'node: http and socket'
  if (/node:internal\/(blob|webstreams|fs)/.test(source)) return 'node: Blob and file reads'
  if (/node:internal\/crypto|webcrypto/.test(source)) return 'node: crypto'
  if (
    /node:internal\/(process\/task_queues|timers|events|event_target|abort_controller)|node:(events|timers)/.test(
      source,
    )
  )
    return 'node: events, timers, microtasks'
  if (source === '') return `native: ${functionName || '(anonymous)'}`
  return `other: ${source.replace(/^.*node_modules\//, '')}`
}
