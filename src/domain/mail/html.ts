/**
 * The HTML part of a customer's mail, written for mail clients rather than browsers: one table
 * for the layout, every style inline (Gmail and Outlook drop `<style>` blocks or parts of them),
 * no script, no image, nothing fetched from elsewhere, and every piece of text escaped. The link
 * is a coloured button with the address written out below it, for clients that show no buttons.
 */
export type Block =
  | { readonly kind: 'p'; readonly text: string }
  | { readonly kind: 'link'; readonly text: string; readonly url: string }
  | {
      readonly kind: 'items'
      readonly lines: readonly { readonly label: string; readonly amount: string | null }[]
      readonly total: { readonly label: string; readonly amount: string } | null
    }

export interface HtmlMail {
  readonly language: string
  readonly title: string
  readonly shop: string
  readonly accent: string
  readonly blocks: readonly Block[]
  readonly footer: string
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

const FONT = "font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
const TEXT = `${FONT};font-size:16px;line-height:24px;color:#1f2937`
const CELL = `${TEXT};padding:6px 0;border-bottom:1px solid #e5e7eb`

export function htmlMail(m: HtmlMail): string {
  const body = m.blocks.map((b) => block(b, m.accent)).join('\n')
  return `<!DOCTYPE html>
<html lang="${escapeHtml(m.language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(m.title)}</title>
</head>
<body style="margin:0;padding:0;background-color:#f3f4f6">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f3f4f6">
<tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:560px;background-color:#ffffff;border-radius:8px">
<tr><td style="padding:24px 32px 8px 32px;${FONT};font-size:20px;line-height:28px;font-weight:bold;color:#111827">${escapeHtml(m.shop)}</td></tr>
<tr><td style="padding:8px 32px 24px 32px">
${body}
</td></tr>
</table>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:560px">
<tr><td style="padding:16px 32px;${FONT};font-size:13px;line-height:20px;color:#4b5563">${escapeHtml(m.footer)}</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`
}

function block(b: Block, accent: string): string {
  switch (b.kind) {
    case 'p':
      return `<p style="margin:0 0 16px 0;${TEXT}">${escapeHtml(b.text)}</p>`
    case 'link': {
      const href = escapeHtml(b.url)
      return `<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="margin:0 0 8px 0"><tr>` +
        `<td style="border-radius:6px;background-color:${accent}">` +
        `<a href="${href}" style="display:inline-block;padding:12px 24px;${FONT};font-size:16px;line-height:20px;font-weight:bold;color:#ffffff;text-decoration:none;border-radius:6px">${escapeHtml(b.text)}</a>` +
        `</td></tr></table>\n<p style="margin:0 0 16px 0;${FONT};font-size:13px;line-height:20px;color:#4b5563;word-break:break-all"><a href="${href}" style="color:${accent}">${href}</a></p>`
    }
    case 'items': {
      if (b.lines.length === 0) return ''
      const row = (label: string, amount: string | null, strong: boolean): string => {
        const weight = strong ? ';font-weight:bold' : ''
        return `<tr><td style="${CELL}${weight}">${escapeHtml(label)}</td>` +
          `<td align="right" style="${CELL}${weight};padding-left:16px;white-space:nowrap">${amount === null ? '' : escapeHtml(amount)}</td></tr>`
      }
      const rows = b.lines.map((l) => row(l.label, l.amount, false))
      if (b.total) rows.push(row(b.total.label, b.total.amount, true))
      return `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="margin:0 0 16px 0">\n${rows.join('\n')}\n</table>`
    }
  }
}
