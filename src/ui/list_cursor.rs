//! The cursor keys every small list picker shares (the user filter, the sort menu): the arrows
//! and `j` `k` move one, Home and End go to the ends. Pure.

use crossterm::event::KeyCode;

/// Where `code` moves a cursor at `cursor` in a list whose last index is `last`; `None` when
/// the key is not a cursor key (the picker decides what it does).
pub fn moved(code: KeyCode, cursor: usize, last: usize) -> Option<usize> {
    Some(match code {
        KeyCode::Up | KeyCode::Char('k') => cursor.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => (cursor + 1).min(last),
        KeyCode::Home => 0,
        KeyCode::End => last,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_stay_inside_the_list_and_other_keys_are_not_moves() {
        assert_eq!(moved(KeyCode::Up, 0, 3), Some(0));
        assert_eq!(moved(KeyCode::Char('j'), 3, 3), Some(3));
        assert_eq!(moved(KeyCode::Down, 1, 3), Some(2));
        assert_eq!(moved(KeyCode::End, 0, 3), Some(3));
        assert_eq!(moved(KeyCode::Home, 2, 3), Some(0));
        assert_eq!(moved(KeyCode::Enter, 2, 3), None);
    }
}
