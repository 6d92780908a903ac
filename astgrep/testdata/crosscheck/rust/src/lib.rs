use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};

#[derive(Debug)]
pub enum ConfigError {
    Io(io::Error),
    Parse { line: usize, msg: String },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Io(e) => write!(f, "io: {}", e),
            ConfigError::Parse { line, msg } => write!(f, "line {}: {}", line, msg),
        }
    }
}

impl From<io::Error> for ConfigError {
    fn from(e: io::Error) -> Self {
        ConfigError::Io(e)
    }
}

pub struct Config {
    values: HashMap<String, String>,
}

impl Config {
    pub fn load(path: &str) -> Result<Config, ConfigError> {
        let file = File::open(path)?;
        let reader = BufReader::new(file);
        let mut values = HashMap::new();
        for (i, line) in reader.lines().enumerate() {
            let line = line?;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = match line.split_once('=') {
                Some(kv) => kv,
                None => {
                    return Err(ConfigError::Parse { line: i + 1, msg: "missing '='".to_string() })
                }
            };
            values.insert(k.trim().to_string(), v.trim().to_string());
        }
        Ok(Config { values })
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|s| s.as_str())
    }

    pub fn get_or(&self, key: &str, default: &str) -> String {
        self.get(key).unwrap_or(default).to_string()
    }

    pub fn port(&self) -> u16 {
        self.get("port").unwrap().parse().unwrap()
    }
}

pub fn parse_pairs(s: &str) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for part in s.split(',') {
        if let Some((k, v)) = part.split_once(':') {
            match v.parse::<i64>() {
                Ok(n) => out.push((k.to_string(), n)),
                Err(e) => println!("skipping {}: {}", part, e),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs() {
        let p = parse_pairs("a:1,b:2,c:x");
        assert_eq!(p.len(), 2);
        println!("{:?}", p);
        let first = p.first().unwrap();
        assert_eq!(first.0, "a");
    }
}
