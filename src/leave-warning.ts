import { useEffect } from 'react'

/**
 * While `active`, leaving or reloading the page asks first (the browser's own "Leave site?"
 * dialog): an upload in flight dies with the page. Browsers show their own words, never the page's.
 */
export function useLeaveWarning(active: boolean): void {
  useEffect(() => {
    if (!active) return
    const warn = (event: BeforeUnloadEvent) => {
      event.preventDefault()
      // Chromium before 119 and Safari still need returnValue set.
      event.returnValue = ''
    }
    window.addEventListener('beforeunload', warn)
    return () => window.removeEventListener('beforeunload', warn)
  }, [active])
}
