import type { Language } from '../messages.ts'

/**
 * The customers' mails in their words (C17): English, Spanish, French and German, in the register
 * the portal uses (usted, vous, Sie). Dates, times and amounts arrive formatted for the language
 * (format.ts); `shop` is REPLENISH_SHOP_NAME. A function per sentence, so each language orders
 * its own words. Checked by test/domain/mail-render.test.ts (every string, every language).
 */
export interface MailStrings {
  /** The salutation, with the customer's first name when the address has one. */
  readonly hello: (name: string | null) => string
  readonly itemFallback: (id: number) => string
  readonly total: string
  readonly footer: (shop: string) => string
  readonly upcoming: {
    readonly subject: (shop: string, day: string) => string
    readonly intro: (shop: string, date: string) => string
    readonly change: (expiry: string) => string
    readonly button: string
    readonly nothingToDo: string
  }
  readonly paymentFailed: {
    readonly subject: (shop: string) => string
    readonly intro: (date: string) => string
    readonly retry: (date: string) => string
    readonly check: (shop: string) => string
  }
  readonly canceled: {
    readonly subject: (shop: string) => string
    readonly intro: string
    readonly items: string
    readonly mistake: (shop: string) => string
  }
}

const EN: MailStrings = {
  hello: (name) => (name ? `Hello ${name},` : 'Hello,'),
  itemFallback: (id) => `Item #${id}`,
  total: 'Total',
  footer: (shop) => `You receive this e-mail because you have a subscription with ${shop}. You can turn these e-mails off in your account.`,
  upcoming: {
    subject: (shop, day) => `Your next ${shop} delivery: ${day}`,
    intro: (shop, date) => `Your next delivery from ${shop} is scheduled for ${date}.`,
    change: (expiry) => `Would you like to skip it, pause your subscription or change something? Open your account with this link. It works once and is valid until ${expiry}.`,
    button: 'Manage my subscription',
    nothingToDo: 'If everything looks right, there is nothing you need to do.',
  },
  paymentFailed: {
    subject: (shop) => `Payment failed for your ${shop} delivery`,
    intro: (date) => `We could not take the payment for your delivery due on ${date}.`,
    retry: (date) => `We will try again on ${date}.`,
    check: (shop) => `Please make sure that your payment details with ${shop} are up to date.`,
  },
  canceled: {
    subject: (shop) => `Your ${shop} subscription has been canceled`,
    intro: 'Your subscription has been canceled. No further deliveries will be sent, and you will not be charged again.',
    items: 'It included:',
    mistake: (shop) => `If you did not mean to cancel it, please contact ${shop}.`,
  },
}

const ES: MailStrings = {
  hello: (name) => (name ? `Hola, ${name}:` : 'Hola:'),
  itemFallback: (id) => `Artículo n.º ${id}`,
  total: 'Total',
  footer: (shop) => `Recibe este correo porque tiene una suscripción con ${shop}. Puede desactivar estos correos en su cuenta.`,
  upcoming: {
    subject: (shop, day) => `Su próxima entrega de ${shop}: ${day}`,
    intro: (shop, date) => `Su próxima entrega de ${shop} está prevista para el ${date}.`,
    change: (expiry) => `¿Desea omitirla, pausar su suscripción o cambiar algo? Acceda a su cuenta con este enlace. Solo puede usarse una vez y es válido hasta el ${expiry}.`,
    button: 'Gestionar mi suscripción',
    nothingToDo: 'Si todo está correcto, no tiene que hacer nada.',
  },
  paymentFailed: {
    subject: (shop) => `No hemos podido cobrar su entrega de ${shop}`,
    intro: (date) => `No hemos podido procesar el pago de su entrega del ${date}.`,
    retry: (date) => `Volveremos a intentarlo el ${date}.`,
    check: (shop) => `Compruebe que sus datos de pago en ${shop} estén actualizados.`,
  },
  canceled: {
    subject: (shop) => `Su suscripción a ${shop} se ha cancelado`,
    intro: 'Su suscripción se ha cancelado. No recibirá más entregas y no se le volverá a cobrar.',
    items: 'Incluía:',
    mistake: (shop) => `Si no quería cancelarla, póngase en contacto con ${shop}.`,
  },
}

// French puts a no-break space before « : », « ? » and « ! ».
const NBSP = '\u00a0'

const FR: MailStrings = {
  hello: (name) => (name ? `Bonjour ${name},` : 'Bonjour,'),
  itemFallback: (id) => `Article nº ${id}`,
  total: 'Total',
  footer: (shop) => `Vous recevez cet e-mail parce que vous avez un abonnement chez ${shop}. Vous pouvez désactiver ces e-mails dans votre compte.`,
  upcoming: {
    subject: (shop, day) => `Votre prochaine livraison ${shop}${NBSP}: ${day}`,
    intro: (shop, date) => `Votre prochaine livraison ${shop} est prévue le ${date}.`,
    change: (expiry) => `Vous souhaitez la sauter, mettre votre abonnement en pause ou modifier quelque chose${NBSP}? Accédez à votre compte avec ce lien. Il n'est utilisable qu'une seule fois et reste valable jusqu'au ${expiry}.`,
    button: 'Gérer mon abonnement',
    nothingToDo: "Si tout vous convient, vous n'avez rien à faire.",
  },
  paymentFailed: {
    subject: (shop) => `Échec du paiement de votre livraison ${shop}`,
    intro: (date) => `Nous n'avons pas pu encaisser le paiement de votre livraison du ${date}.`,
    retry: (date) => `Nous réessaierons le ${date}.`,
    check: (shop) => `Veuillez vérifier que vos informations de paiement enregistrées chez ${shop} sont à jour.`,
  },
  canceled: {
    subject: (shop) => `Votre abonnement ${shop} a été résilié`,
    intro: "Votre abonnement a été résilié. Vous ne recevrez plus de livraison et aucun autre paiement ne vous sera demandé.",
    items: `Il comprenait${NBSP}:`,
    mistake: (shop) => `Si vous ne souhaitiez pas le résilier, veuillez contacter ${shop}.`,
  },
}

const DE: MailStrings = {
  hello: (name) => (name ? `Hallo ${name},` : 'Guten Tag,'),
  itemFallback: (id) => `Artikel Nr. ${id}`,
  total: 'Gesamtbetrag',
  footer: (shop) => `Sie erhalten diese E-Mail, weil Sie ein Abonnement bei ${shop} haben. Sie können diese E-Mails in Ihrem Kundenkonto abbestellen.`,
  upcoming: {
    subject: (shop, day) => `Ihre nächste Lieferung von ${shop}: ${day}`,
    intro: (shop, date) => `Ihre nächste Lieferung von ${shop} ist für ${date} geplant.`,
    change: (expiry) => `Möchten Sie diese Lieferung auslassen, Ihr Abonnement pausieren oder etwas ändern? Öffnen Sie Ihr Kundenkonto über diesen Link. Er kann einmal verwendet werden und ist bis zum ${expiry} gültig.`,
    button: 'Mein Abonnement verwalten',
    nothingToDo: 'Wenn alles passt, müssen Sie nichts weiter tun.',
  },
  paymentFailed: {
    subject: (shop) => `Zahlung für Ihre Lieferung von ${shop} fehlgeschlagen`,
    intro: (date) => `Leider konnten wir die Zahlung für Ihre Lieferung vom ${date} nicht einziehen.`,
    retry: (date) => `Wir versuchen es am ${date} erneut.`,
    check: (shop) => `Bitte prüfen Sie, ob Ihre bei ${shop} hinterlegten Zahlungsdaten aktuell sind.`,
  },
  canceled: {
    subject: (shop) => `Ihr Abonnement bei ${shop} wurde gekündigt`,
    intro: 'Ihr Abonnement wurde gekündigt. Sie erhalten keine weiteren Lieferungen, und es werden keine weiteren Zahlungen eingezogen.',
    items: 'Es umfasste:',
    mistake: (shop) => `Falls Sie nicht kündigen wollten, wenden Sie sich bitte an ${shop}.`,
  },
}

export const MAIL_STRINGS: Readonly<Record<Language, MailStrings>> = { en: EN, es: ES, fr: FR, de: DE }
