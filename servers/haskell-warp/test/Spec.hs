{-# LANGUAGE OverloadedStrings, TupleSections #-}
{-# OPTIONS_GHC -Wno-deprecations #-}
-- | The server's own tests: the /work computation and the date validation
-- against contract/fixtures and extra near-miss dates, and the WAI
-- application's routes, called directly (no network). Exits 1 on any failure.
module Main (main) where

import Control.Exception (SomeException, evaluate, try)
import Control.Monad (forM, unless)
import Data.Aeson (Value (..), decode, decodeStrict', encode)
import qualified Data.Aeson.Key as Key
import qualified Data.Aeson.KeyMap as KM
import qualified Data.ByteString as B
import qualified Data.ByteString.Builder as BB
import qualified Data.ByteString.Char8 as BC
import qualified Data.ByteString.Lazy as BL
import Data.IORef
import Data.Maybe (isJust, isNothing)
import Data.Text (Text)
import qualified Data.Text as T
import Network.HTTP.Types (HeaderName, methodGet, methodPost, statusCode)
import Network.Wai
import Network.Wai.Internal (ResponseReceived (..))
import qualified Network.Wai.Internal as Internal
import System.Directory (doesFileExist)
import System.Exit (exitFailure)

import App (Mode (..), app, maxBodyBytes)
import Work (compute, formatMillis, parseDate)

type Check = (String, Bool)

fixtureDir :: FilePath
fixtureDir = "../../contract/fixtures/"

main :: IO ()
main = do
  fixtures <- fixtureChecks
  routes <- routeChecks
  let checks = fixtures ++ dateChecks ++ computeChecks ++ routes
      failed = [name | (name, ok) <- checks, not ok]
  mapM_ (\n -> putStrLn ("FAIL " ++ n)) failed
  putStrLn (show (length checks - length failed) ++ " passed, " ++ show (length failed) ++ " failed")
  unless (null failed) exitFailure

field :: Text -> Value -> Maybe Value
field k (Object o) = KM.lookup (Key.fromText k) o
field _ _ = Nothing

-- | Every line of work.jsonl answered JSON-equal, every line of
-- rejected.jsonl refused.
fixtureChecks :: IO [Check]
fixtureChecks = do
  let workFile = fixtureDir ++ "work.jsonl"
      rejFile = fixtureDir ++ "rejected.jsonl"
  present <- (&&) <$> doesFileExist workFile <*> doesFileExist rejFile
  if not present
    then pure [("contract fixtures found in " ++ fixtureDir, False)]
    else do
      works <- fixtureLines workFile
      rejs <- fixtureLines rejFile
      let workChecks =
            [ ("work fixture: " ++ name v, ok)
            | v <- works
            , let ok = case (field "request" v, field "answer" v) of
                    (Just rq, Just ans) ->
                      (compute (BL.toStrict (encode rq)) >>= decodeValue) == Just ans
                    _ -> False ]
          rejChecks =
            [ ("rejected fixture: " ++ name v, ok)
            | v <- rejs
            , let ok = case field "body" v of
                    Just (String b) -> isNothing (compute (encodeText b))
                    _ -> False ]
      pure $ ("fixture counts", length works >= 4 && length rejs >= 18) : workChecks ++ rejChecks
  where
    name v = case field "name" v of
      Just (String n) -> T.unpack n
      _ -> "?"

fixtureLines :: FilePath -> IO [Value]
fixtureLines path = do
  content <- B.readFile path
  forM (filter (not . B.null) (BC.lines content)) $ \l ->
    maybe (fail ("bad fixture line in " ++ path)) pure (decodeStrict' l)

encodeText :: Text -> B.ByteString
encodeText = BL.toStrict . BB.toLazyByteString . BB.stringUtf8 . T.unpack

decodeValue :: BL.ByteString -> Maybe Value
decodeValue = decode

validDates :: [Text]
validDates =
  [ "2020-01-12T10:53:17.773Z", "2000-02-29T12:00:00.000Z", "2400-02-29T00:00:00.000Z"
  , "2024-02-29T23:59:59.999Z", "2020-12-31T23:59:59.999Z", "0000-01-01T00:00:00.000Z"
  , "9999-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z"
  , "2021-04-30T00:00:00.000Z" ]

invalidDates :: [Text]
invalidDates =
  [ "2020-13-45T99:00:00.000Z", "yesterday", "", "2021-02-29T00:00:00.000Z"
  , "1900-02-29T00:00:00.000Z", "2100-02-29T00:00:00.000Z", "2021-04-31T00:00:00.000Z"
  , "2020-00-10T00:00:00.000Z", "2020-01-00T00:00:00.000Z", "2020-01-32T00:00:00.000Z"
  , "2020-01-01T24:00:00.000Z", "2020-01-01T23:60:00.000Z", "2020-01-01T00:00:60.000Z"
  , "2020-01-01T00:00:00.+01Z", "2020-01-01T00:00:00.-01Z", "2020-01-01T00:00:00.000+00:00"
  , "2020-01-01T00:00:00Z", "2020-1-01T00:00:00.000Z", "2020-01-01 00:00:00.000Z"
  , "2020-01-01T00:00:00.000z", "2020-01-01t00:00:00.000Z", "2020-01-01T00:00:00,000Z"
  , "2020-01-01T00:00:00.0000Z", "+020-01-01T00:00:00.000Z", " 2020-01-01T00:00:00.000Z"
  , "2020-01-01T00:00:00.000Z ", "2020-01-01T00:00:00.00Z", "2020-01-01T00:00:0 .000Z"
  , "\65298\&020-01-01T00:00:00.000Z", "2020-01-01T00:00:00.000\0" ]

dateChecks :: [Check]
dateChecks =
     [ ("valid date parses and formats back: " ++ T.unpack d, fmap formatMillis (parseDate d) == Just d)
     | d <- validDates ]
  ++ [ ("invalid date refused: " ++ show d, isNothing (parseDate d)) | d <- invalidDates ]
  ++ [ ("order across 1970", parseDate "1969-12-31T23:59:59.999Z" < parseDate "1970-01-01T00:00:00.000Z")
     , ("order by milliseconds", parseDate "2020-01-01T00:00:00.001Z" > parseDate "2020-01-01T00:00:00.000Z")
     , ("one millisecond apart",
        ((-) <$> parseDate "2021-01-01T00:00:00.000Z" <*> parseDate "2020-12-31T23:59:59.999Z") == Just 1) ]

doc :: B.ByteString -> B.ByteString -> B.ByteString
doc balance dates =
  "{\"product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":"
    <> balance <> ",\"dates\":" <> dates <> "}}"

computeChecks :: [Check]
computeChecks =
  [ ("min and max of several dates",
     (compute (doc "12.5" "[\"2021-07-30T23:59:59.999Z\",\"2019-03-01T00:00:00.000Z\",\"2020-01-12T10:53:17.773Z\"]") >>= decodeValue)
       == decodeStrict' "{\"product\":\"p\",\"requestId\":\"r\",\"client\":{\"balance\":12.5,\"minDate\":\"2019-03-01T00:00:00.000Z\",\"maxDate\":\"2021-07-30T23:59:59.999Z\"}}")
  , ("answer has exactly three keys and client three",
     case compute (doc "1" "[\"2020-01-01T00:00:00.000Z\"]") >>= decodeValue of
       Just (Object o) -> KM.size o == 3 && case KM.lookup "client" o of
         Just (Object c) -> KM.size c == 3
         _ -> False
       _ -> False)
  , ("null balance refused", isNothing (compute (doc "null" "[\"2020-01-01T00:00:00.000Z\"]")))
  , ("balance out of double range refused", isNothing (compute (doc "1e400" "[\"2020-01-01T00:00:00.000Z\"]")))
  , ("null dates refused", isNothing (compute (doc "1" "null")))
  , ("a null date refused", isNothing (compute (doc "1" "[\"2020-01-01T00:00:00.000Z\",null]")))
  , ("dates as a string refused", isNothing (compute (doc "1" "\"2020-01-01T00:00:00.000Z\"")))
  , ("null product refused", isNothing (compute "{\"product\":null,\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":1,\"dates\":[\"2020-01-01T00:00:00.000Z\"]}}"))
  , ("wrong-case key refused", isNothing (compute "{\"Product\":\"p\",\"requestId\":\"r\",\"group\":{\"kind\":\"k\",\"default\":true,\"balance\":1,\"dates\":[\"2020-01-01T00:00:00.000Z\"]}}"))
  , ("trailing garbage refused", isNothing (compute (doc "1" "[\"2020-01-01T00:00:00.000Z\"]" <> "x")))
  , ("trailing whitespace accepted", isJust (compute (doc "1" "[\"2020-01-01T00:00:00.000Z\"]" <> " \n")))
  , ("empty body refused", isNothing (compute ""))
  ]

-- | Call the application directly with a request and collect the answer.
call :: Mode -> B.ByteString -> B.ByteString -> [B.ByteString] -> IO (Int, [(HeaderName, B.ByteString)], BL.ByteString)
call mode method path chunks = do
  pending <- newIORef chunks
  let next = atomicModifyIORef' pending (\cs -> case cs of
        [] -> ([], B.empty)
        (c : rest) -> (rest, c))
      -- wai 3.2.3 has no setRequestBodyChunks yet: set the record field.
      req = defaultRequest
              { requestMethod = method, rawPathInfo = path
              , requestBodyLength = ChunkedBody, Internal.requestBody = next }
  out <- newIORef Nothing
  _ <- app mode req $ \resp -> do
    let (st, hs, withBody) = responseToStream resp
    acc <- newIORef mempty
    withBody $ \body -> body (\b -> modifyIORef' acc (<> b)) (pure ())
    b <- readIORef acc
    writeIORef out (Just (statusCode st, hs, BB.toLazyByteString b))
    pure ResponseReceived
  readIORef out >>= maybe (fail "no response") pure

routeChecks :: IO [Check]
routeChecks = do
  let workBody = doc "1234.56" "[\"2020-01-12T10:53:17.773Z\",\"2019-03-01T00:00:00.000Z\"]"
      (part1, part2) = B.splitAt 40 workBody
      is st ct body (s, hs, b) = s == st && lookup "Content-Type" hs == Just ct && b == body
               && lookup "Content-Length" hs == Just (BC.pack (show (BL.length b)))
      status st (s, _, _) = s == st
  r <- try $ sequence
    [ ("GET /blank", ) . is 200 "text/plain" "OK" <$> call RootNone methodGet "/blank" []
    , ("GET /echo/abc-1.~", ) . is 200 "text/plain" "abc-1.~" <$> call RootNone methodGet "/echo/abc-1.~" []
    , ("GET /echo is 404", ) . status 404 <$> call RootNone methodGet "/echo" []
    , ("GET /nope is 404", ) . status 404 <$> call RootNone methodGet "/nope" []
    , ("GET / without mode is 404", ) . status 404 <$> call RootNone methodGet "/" []
    , ("GET / in mode 0", ) . is 200 "text/plain" "OK" <$> call RootBlank methodGet "/" []
    , ("POST / in mode 0 is 404", ) . status 404 <$> call RootBlank methodPost "/" [workBody]
    , ("POST /work in two chunks", ) . (\(s, hs, b) -> s == 200 && lookup "Content-Type" hs == Just "application/json"
                                        && decodeValue b == decodeStrict' "{\"product\":\"p\",\"requestId\":\"r\",\"client\":{\"balance\":1234.56,\"minDate\":\"2019-03-01T00:00:00.000Z\",\"maxDate\":\"2020-01-12T10:53:17.773Z\"}}")
        <$> call RootNone methodPost "/work" [part1, part2]
    , ("POST / in mode 1", ) . status 200 <$> call RootWork methodPost "/" [workBody]
    , ("GET / in mode 1 is 404", ) . status 404 <$> call RootWork methodGet "/" []
    , ("POST /work bad date is 400", ) . status 400 <$> call RootNone methodPost "/work" [doc "1" "[\"2021-02-29T00:00:00.000Z\"]"]
    , ("POST /work over 1 MiB is 413", ) . status 413 <$> call RootNone methodPost "/work" (replicate 5 (B.replicate (maxBodyBytes `div` 4) 32))
    , ("GET /work is not 200", ) . (\(s, _, _) -> s == 404 || s == 405) <$> call RootNone methodGet "/work" []
    ]
  case r of
    Left e -> pure [("routes: " ++ show (e :: SomeException), False)]
    Right cs -> mapM (\c@(_, ok) -> evaluate ok >> pure c) cs
