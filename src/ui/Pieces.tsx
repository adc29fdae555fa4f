import { Fragment, type ReactNode } from 'react'

/**
 * "45%", "12 MiB of 40 MiB", "1.9 MiB/s", "11 s left", each kept on one line, a "·" before each
 * but the first: a narrow row wraps between pieces, never inside one ("11 / s left"). Every piece's
 * dot sits in a box of one width (the first's empty), and {@link Figures} shifts its lines left by
 * that width and clips it: the dot of a piece that starts a line is cut off, so no wrapped line
 * starts with a lone "·". `after` continues a run (every piece gets its dot); `ghost` keeps the
 * pieces' space but shows nothing (aria-hidden).
 */
export function Pieces({ texts, after = false, ghost = false }: { texts: string[]; after?: boolean; ghost?: boolean }) {
  if (texts.length === 0) return null
  const pieces = texts.map((text, index) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: the pieces are positions in one line of text, never reordered
    <Fragment key={index}>
      {/* The space stays outside the pieces: it is where a line may break. */}
      {(index > 0 || after) && ' '}
      <span className="updraft-piece">
        <span className="updraft-dot">{index > 0 || after ? '·\u00a0' : ''}</span>
        {text}
      </span>
    </Fragment>
  ))
  return ghost ? (
    <span className="updraft-ghost" aria-hidden="true">
      {pieces}
    </span>
  ) : (
    pieces
  )
}

/** The box around a run of {@link Pieces} that cuts off the dot of each line's first piece. */
export function Figures({ children, className = 'updraft-transfer' }: { children: ReactNode; className?: string }) {
  return (
    <span className={`updraft-figures ${className}`}>
      <span className="updraft-pieces">{children}</span>
    </span>
  )
}
