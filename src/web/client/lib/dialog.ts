import { h } from './dom.ts'

export interface ConfirmSpec {
  readonly title: string
  readonly body?: string
  /** More than a sentence: what the change will do, as a dry run answered it. */
  readonly details?: Node
  readonly confirm: string
  readonly dismiss: string
  /** A confirmation that destroys something is drawn as such. */
  readonly danger?: boolean
}

/**
 * A confirmation in a modal `<dialog>`: the browser traps focus in it and closes it on Escape,
 * and focus returns where it was. The safe choice (dismiss) has the focus first, so Enter
 * pressed by habit changes nothing. Answers true only for the confirm button.
 */
export function confirmDialog(spec: ConfirmSpec): Promise<boolean> {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
  return new Promise((resolve) => {
    const titleId = `dialog-title-${Date.now()}`
    const dismiss = h('button', { type: 'button', class: 'button secondary', value: 'dismiss' }, spec.dismiss)
    const confirm = h('button', { type: 'button', class: `button${spec.danger ? ' danger' : ''}`, value: 'confirm' }, spec.confirm)
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': titleId },
      h('h2', { id: titleId }, spec.title),
      spec.body === undefined ? null : h('p', null, spec.body),
      spec.details ?? null,
      h('div', { class: 'actions' }, dismiss, confirm))
    let answer = false
    dismiss.addEventListener('click', () => dialog.close())
    confirm.addEventListener('click', () => { answer = true; dialog.close() })
    dialog.addEventListener('close', () => {
      dialog.remove()
      opener?.focus()
      resolve(answer)
    })
    document.body.append(dialog)
    dialog.showModal()
    dismiss.focus()
  })
}
