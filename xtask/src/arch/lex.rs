//! Tokens: identifiers and the few punctuation marks paths are made of; comments, strings and
//! character literals removed.

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

pub fn lex(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i + 1);
        } else if (ch == 'r' || ch == 'b')
            && !prev_is_ident(&c, i)
            && raw_string_start(&c, i).is_some()
        {
            let (hashes, open) = raw_string_start(&c, i).expect("checked");
            i = open + 1;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '"' && (0..hashes).all(|h| c.get(i + 1 + h) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
        } else if ch == 'b' && !prev_is_ident(&c, i) && c.get(i + 1) == Some(&'"') {
            i = skip_string(&c, i + 2);
        } else if ch == '\'' {
            // A character literal ('a', '\n', '\u{..}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // `r#type` is the identifier `type`.
            if word == "r" && c.get(i) == Some(&'#') {
                // `r#type` is the identifier `type`.
                i += 1;
            } else {
                out.push(Tok::Ident(word));
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Tok::Sep);
            i += 2;
        } else if ch.is_whitespace() || ch == '$' || ch.is_ascii_digit() {
            // `$crate` in a macro is `crate`; numbers never start a path.
            i += 1;
            if ch.is_ascii_digit() {
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                    i += 1;
                }
            }
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

fn prev_is_ident(c: &[char], i: usize) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

/// At `r"`, `r#"`, `br"`, `br#"`: the number of `#` and the index of the opening quote.
fn raw_string_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((hashes, j))
}

/// From just after an opening `"`, the index just after its closing `"`.
fn skip_string(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}
