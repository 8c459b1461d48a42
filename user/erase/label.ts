/**
 * Volume labels as each filesystem allows them. FAT stores 11 bytes in the OEM code page, so only
 * the characters every code page shares are taken, in upper case as DOS wrote them; exFAT stores
 * up to 11 UTF-16 code units. A label that cannot be stored is refused, never silently changed
 * (apart from FAT's upper case, which every OS shows that way anyway).
 */
const LABEL_LENGTH = 11;
const FAT_LABEL = /^[A-Z0-9!#$%&'()\-@^_`{}~ ]+$/;
const EXFAT_FORBIDDEN = /[\u0000-\u001f"*/:<>?\\|]/;

/** The label padded with spaces to FAT's 11 bytes; null for none. */
export function fatLabel(label: string | null): string | null {
  if (label === null) return null;
  const upper = label.toUpperCase();
  if (upper.length === 0 || upper.length > LABEL_LENGTH || !FAT_LABEL.test(upper) || upper.startsWith(' ')) {
    throw new Error(
      `"${label}" cannot be a FAT32 label: up to ${LABEL_LENGTH} letters A-Z, digits, spaces (not first) and ! # $ % & ' ( ) - @ ^ _ \` { } ~`,
    );
  }
  return upper.padEnd(LABEL_LENGTH, ' ');
}

/** The label for exFAT's volume label entry; null for none. */
export function exfatLabel(label: string | null): string | null {
  if (label === null) return null;
  if (label.length === 0 || label.length > LABEL_LENGTH || EXFAT_FORBIDDEN.test(label)) {
    throw new Error(
      `"${label}" cannot be an exFAT label: up to ${LABEL_LENGTH} characters, none of " * / : < > ? \\ | or control characters`,
    );
  }
  return label;
}
