//! What a user's password must be (NIST SP 800-63B, 5.1.1.2): long enough, not absurdly long,
//! and not one that attackers try first. No rules of composition (a digit, a capital, …), which
//! the guidance advises against.
//!
//! Every way a password is set goes through [`password_problem`]: [`Store::create_user`] and
//! [`Store::set_password`]. Only the demo seed does not (its users are for local use only).
//!
//! [`Store::create_user`]: crate::Store::create_user
//! [`Store::set_password`]: crate::Store::set_password

use std::collections::HashSet;
use std::sync::OnceLock;

use rand::Rng;
use rand::rngs::OsRng;
use toolbridge_protocol::Violation;

use crate::Error;

/// The fewest characters a password may have.
pub const PASSWORD_MIN_CHARS: usize = 12;

/// The most characters a password may have: far more than anyone types, few enough that hashing
/// one costs nothing unusual.
pub const PASSWORD_MAX_CHARS: usize = 1024;

/// Characters of a generated password: letters and digits, without those that are easily read
/// as one another (`0`/`O`, `1`/`l`/`I`).
const GENERATED_ALPHABET: &[u8] = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// Characters of a generated password: about 117 bits from the 57 letters and digits that are
/// not easily read as one another.
pub const GENERATED_PASSWORD_CHARS: usize = 20;

/// The list of common passwords the policy refuses: lower-cased, one a line, `#` lines are
/// comments.
const COMMON_PASSWORDS: &str = include_str!("common-passwords.txt");

/// [`COMMON_PASSWORDS`] as a set, read on first use.
fn common_passwords() -> &'static HashSet<&'static str> {
    static COMMON: OnceLock<HashSet<&'static str>> = OnceLock::new();
    COMMON.get_or_init(|| {
        COMMON_PASSWORDS
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    })
}

/// Whether `password` is on the list of common passwords, whatever its case.
pub fn is_common_password(password: &str) -> bool {
    common_passwords().contains(password.to_lowercase().as_str())
}

/// Why `password` may not be a user's password (`is 9 characters; use at least 12`), or `None`
/// when it may. Characters are counted, not bytes.
pub fn password_problem(password: &str) -> Option<String> {
    let chars = password.chars().count();
    if chars < PASSWORD_MIN_CHARS {
        return Some(format!(
            "is {chars} character{}; use at least {PASSWORD_MIN_CHARS}",
            if chars == 1 { "" } else { "s" }
        ));
    }
    if chars > PASSWORD_MAX_CHARS {
        return Some(format!(
            "is {chars} characters; use at most {PASSWORD_MAX_CHARS}"
        ));
    }
    let mut distinct = password.chars();
    let first = distinct.next();
    if distinct.all(|c| Some(c) == first) {
        return Some("is one character repeated; choose one that is harder to guess".to_owned());
    }
    if is_common_password(password) {
        return Some(
            "is one of the most common passwords; choose one that is harder to guess".to_owned(),
        );
    }
    None
}

/// [`password_problem`] as the store's error: [`Error::Invalid`] with the path `password`.
pub(crate) fn check_password(password: &str) -> Result<(), Error> {
    match password_problem(password) {
        None => Ok(()),
        Some(problem) => Err(Error::Invalid(vec![Violation::new("password", problem)])),
    }
}

/// A new random password of [`GENERATED_PASSWORD_CHARS`] characters (from the OS's random
/// source) that the policy allows.
pub fn generate_password() -> String {
    loop {
        let password: String = (0..GENERATED_PASSWORD_CHARS)
            .map(|_| {
                let i = OsRng.gen_range(0..GENERATED_ALPHABET.len());
                char::from(GENERATED_ALPHABET[i])
            })
            .collect();
        // Practically never refused; checked so that what is printed is certainly accepted.
        if password_problem(&password).is_none() {
            return password;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_password_is_refused_with_its_length_in_characters() {
        assert_eq!(
            password_problem("short-pass").as_deref(),
            Some("is 10 characters; use at least 12")
        );
        assert_eq!(
            password_problem("x").as_deref(),
            Some("is 1 character; use at least 12")
        );
        assert_eq!(
            password_problem("").as_deref(),
            Some("is 0 characters; use at least 12")
        );
        // Eleven characters in 21 bytes: counted as eleven.
        let eleven = "ééééééééééb";
        assert_eq!(eleven.len(), 21);
        assert_eq!(
            password_problem(eleven).as_deref(),
            Some("is 11 characters; use at least 12")
        );
        // Twelve characters, fewer bytes than a longer ASCII one would need: allowed.
        assert_eq!(password_problem("ééééééééééba"), None);
        assert_eq!(password_problem("tidal-kettle"), None);
    }

    #[test]
    fn an_overlong_password_is_refused() {
        let longest: String = "ab".repeat(PASSWORD_MAX_CHARS / 2);
        assert_eq!(password_problem(&longest), None);
        let over = format!("{longest}c");
        assert_eq!(
            password_problem(&over).as_deref(),
            Some("is 1025 characters; use at most 1024")
        );
    }

    #[test]
    fn a_common_password_is_refused_whatever_its_case() {
        for common in [
            "qwertyuiop12",
            "PASSWORD1234",
            "Password1234",
            "1qaz2wsx3edc",
            "passwordpassword",
        ] {
            assert_eq!(
                password_problem(common).as_deref(),
                Some("is one of the most common passwords; choose one that is harder to guess"),
                "{common}"
            );
        }
        assert!(!is_common_password("harbour-tide-lantern"));
    }

    #[test]
    fn one_character_repeated_is_refused() {
        assert_eq!(
            password_problem("zzzzzzzzzzzzzzzz").as_deref(),
            Some("is one character repeated; choose one that is harder to guess")
        );
    }

    #[test]
    fn the_list_is_lower_case_long_passwords_without_stray_space() {
        let list = common_passwords();
        assert!(
            (500..=5000).contains(&list.len()),
            "{} common passwords",
            list.len()
        );
        for password in list {
            assert_eq!(*password, password.to_lowercase(), "{password:?}");
            assert_eq!(*password, password.trim(), "{password:?}");
            assert!(
                password.chars().count() >= PASSWORD_MIN_CHARS,
                "{password:?} is shorter than the minimum, so never reaches the list"
            );
        }
    }

    #[test]
    fn a_generated_password_is_allowed_and_fresh_each_time() {
        let first = generate_password();
        let second = generate_password();
        assert_eq!(first.chars().count(), GENERATED_PASSWORD_CHARS);
        assert!(first.bytes().all(|b| GENERATED_ALPHABET.contains(&b)));
        assert_eq!(password_problem(&first), None);
        assert_ne!(first, second);
    }

    #[test]
    fn check_password_names_the_field() {
        let error = check_password("short").expect_err("too short");
        assert_eq!(
            error.to_string(),
            "invalid input: password: is 5 characters; use at least 12"
        );
        assert!(check_password("a sentence is a fine password").is_ok());
    }
}
