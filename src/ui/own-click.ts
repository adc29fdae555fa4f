import type { MouseEvent } from 'react'

/** The button the last click that acted landed on (one page, one pointer: shared by every list). */
let lastActed: EventTarget | null = null

/**
 * Whether a click on a row's button should act: not when it is the second (or third) click of a
 * double click that began on another button. Buttons change under a still pointer — Retry takes
 * Cancel's place and then Cancel takes Retry's, Remove brings the next row's Remove up — and the
 * second click then landed on a button nobody aimed at (a double click on one row's Retry
 * restarted it and cancelled the row that slid under the pointer). A double click on the same
 * button (Copy link twice) still acts twice; a key press (detail 0) always acts.
 */
export function ownClick(event: MouseEvent<HTMLElement>): boolean {
  if (event.detail >= 2 && event.currentTarget !== lastActed) return false
  lastActed = event.currentTarget
  return true
}
